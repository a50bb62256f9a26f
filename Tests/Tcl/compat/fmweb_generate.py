#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Generates Tcl scripts with FullMonteWeb's own generator (application/tclGenerator.py, read
from a FullMonteWeb checkout at test time, never copied here) for the cases below: every source
type and kernel the site offers. Only the function tclGeneratorWriter is taken from the file (its
module imports Django and cloud clients), and its Docker volume path '/sims/' is pointed at the
test folder; the scripts are otherwise exactly what the site generates.

usage: fmweb_generate.py tclGenerator.py outdir simsdir mesh.vtk
"""
import ast
import os
import shutil
import sys


def session(kernel, sources, scored=(), packets=2000):
    """A FullMonteWeb session: materials air/tissue/tumour (mm), one entry per source."""
    keys = ['sourceType', 'xPos', 'yPos', 'zPos', 'xDir', 'yDir', 'zDir', 'vElement', 'rad', 'power',
            'volumeRegion', 'emitHemiSphere', 'hemiSphereEmitDistribution', 'numericalAperture',
            'checkDirection', 'xDir1', 'yDir1', 'zDir1', 'xPos0', 'yPos0', 'zPos0', 'xPos1', 'yPos1',
            'zPos1', 'emitVolume']
    defaults = dict(xPos=0.0, yPos=0.0, zPos=0.0, xDir=0.0, yDir=0.0, zDir=1.0, vElement=1, rad=1.0,
                    power=1.0, volumeRegion=1, emitHemiSphere='false', hemiSphereEmitDistribution='LAMBERT',
                    numericalAperture=0.5, checkDirection='false', xDir1=0.0, yDir1=0.0, zDir1=1.0,
                    xPos0=0.0, yPos0=0.0, zPos0=0.0, xPos1=0.0, yPos1=0.0, zPos1=1.0, emitVolume='true')
    s = {k: [] for k in keys}
    for src in sources:
        full = dict(defaults, **src)
        for k in keys:
            s[k].append(full[k])
    s.update(kernelType=kernel, scoredVolumeRegionID=list(scored), packetCount=packets,
             material=['Air', 'Tissue', 'Tumour'], scatteringCoeff=[0.0, 2.0, 3.0],
             absorptionCoeff=[0.0, 0.05, 0.1], refractiveIndex=[1.0, 1.37, 1.4], anisotropy=[0.0, 0.9, 0.9])
    return s


POINT = dict(sourceType='Point', xPos=3.0, yPos=2.0, zPos=1.0)
CASES = {
    'web_point': session('TetraVolumeKernel', [POINT]),
    'web_pencil': session('TetraVolumeKernel', [dict(sourceType='PencilBeam', xPos=1.0, yPos=1.0, zPos=9.5,
                                                     xDir=0.0, yDir=0.0, zDir=-1.0)]),
    'web_volume': session('TetraVolumeKernel', [dict(sourceType='Volume', vElement=100)]),
    'web_ball': session('TetraVolumeKernel', [dict(sourceType='Ball', xPos=3.0, yPos=0.0, zPos=0.0, rad=2.0)]),
    'web_cyl_volume': session('TetraVolumeKernel', [dict(sourceType='Cylinder', xPos0=-5.0, xPos1=5.0, zPos1=0.0,
                                                         rad=0.5, emitVolume='true')]),
    'web_cyl_surface': session('TetraVolumeKernel', [dict(sourceType='Cylinder', xPos0=-5.0, xPos1=5.0, zPos1=0.0,
                                                          rad=0.5, emitVolume='false', emitHemiSphere='false')]),
    'web_cyl_lambert': session('TetraVolumeKernel', [dict(sourceType='Cylinder', xPos0=-5.0, xPos1=5.0, zPos1=0.0,
                                                          rad=0.5, emitVolume='false', emitHemiSphere='true',
                                                          hemiSphereEmitDistribution='LAMBERT')]),
    'web_cyl_uniform': session('TetraVolumeKernel', [dict(sourceType='Cylinder', xPos0=-5.0, xPos1=5.0, zPos1=0.0,
                                                          rad=0.5, emitVolume='false', emitHemiSphere='true',
                                                          hemiSphereEmitDistribution='UNIFORM')]),
    'web_cyl_custom': session('TetraVolumeKernel', [dict(sourceType='Cylinder', xPos0=-5.0, xPos1=5.0, zPos1=0.0,
                                                         rad=0.5, emitVolume='false', emitHemiSphere='true',
                                                         hemiSphereEmitDistribution='CUSTOM', numericalAperture=0.4)]),
    'web_ssb': session('TetraVolumeKernel', [dict(sourceType='SurfaceSourceBuilder', volumeRegion=2)]),
    'web_ssb_custom': session('TetraVolumeKernel', [dict(sourceType='SurfaceSourceBuilder', volumeRegion=2,
                                                         emitHemiSphere='true', hemiSphereEmitDistribution='CUSTOM',
                                                         numericalAperture=0.3, checkDirection='true',
                                                         xDir1=0.0, yDir1=0.0, zDir1=1.0)]),
    'web_composite': session('TetraVolumeKernel', [POINT, dict(sourceType='Ball', xPos=-3.0, rad=1.5),
                                                   dict(sourceType='SurfaceSourceBuilder', volumeRegion=2)]),
    'web_sv': session('TetraSVKernel', [POINT]),
    'web_surface': session('TetraSurfaceKernel', [POINT]),
    'web_internal': session('TetraInternalKernel', [POINT], scored=[2]),
    'web_internal2': session('TetraInternalKernel', [POINT], scored=[2, 1]),
    # What the site generates on a GPU instance.
    'web_cuda_volume': session('TetraCUDAVolumeKernel', [POINT]),
    'web_cuda_sv': session('TetraCUDASVKernel', [POINT]),
    'web_cuda_internal': session('TetraCUDAInternalKernel', [POINT], scored=[2]),
}


class SimsPath(ast.NodeTransformer):
    def __init__(self, sims):
        self.sims = sims

    def visit_Constant(self, node):
        if node.value == '/sims/':
            return ast.copy_location(ast.Constant(self.sims.rstrip('/') + '/'), node)
        return node


def main():
    gen, outdir, sims, mesh = sys.argv[1:5]
    tree = ast.parse(open(gen).read(), gen)
    fn = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == 'tclGeneratorWriter']
    if not fn:
        sys.exit(gen + ': no function tclGeneratorWriter')
    module = ast.fix_missing_locations(ast.Module(body=[SimsPath(sims).visit(fn[0])], type_ignores=[]))
    ns = {'os': os, '__file__': os.path.join(outdir, 'tclGenerator.py')}
    exec(compile(module, gen, 'exec'), ns)
    os.makedirs(os.path.join(outdir, 'tcl'), exist_ok=True)
    for name, s in CASES.items():
        open(os.path.join(outdir, 'tcl', 'tcl_template.tcl'), 'w').close()
        path = ns['tclGeneratorWriter'](s, mesh, 'mm', 10.0, 'J', name)
        shutil.copy(path, os.path.join(outdir, name + '.tcl'))
        print(name)


if __name__ == '__main__':
    main()
