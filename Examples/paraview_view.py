# SPDX-License-Identifier: GPL-3.0-or-later
"""Open a FullMonte result in ParaView with a sensible first view.

Shows a slice through the centre of the mesh, coloured by fluence on a log scale, with the
outlines of the regions where they cross the slice and the mesh's bounding box.

    pvpython Examples/paraview_view.py result.vtu                        # interactive window
    pvpython Examples/paraview_view.py result.vtu --png view.png         # just save a picture
    pvpython Examples/paraview_view.py result.vtu --array "Energy (J)" --normal 0 1 0

In the ParaView GUI: View > Python Shell > Run Script, after setting RESULT below. Files come
from VTKMeshWriter or `fullmonte-vtk` (.vtu or legacy .vtk): cell data "Region" plus arrays such
as "Fluence (W/mm^2)". Written against paraview.simple (ParaView 5.9 and later).
"""
import argparse
import math
import sys

from paraview.simple import (ColorBy, ExtractSurface, GetActiveViewOrCreate, GetColorTransferFunction,
                             GetScalarBar, OpenDataFile, Outline, Render, SaveScreenshot, Show, Slice, Threshold)

RESULT = ""  # for the GUI's Run Script: path of the .vtu/.vtk to open


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("result", nargs="?", default=RESULT, help=".vtu or .vtk written by FullMonte")
    p.add_argument("--array", help='cell array to colour by (default: the first "Fluence..." array)')
    p.add_argument("--origin", nargs=3, type=float, help="a point on the slice (default: the centre)")
    p.add_argument("--normal", nargs=3, type=float, default=[0.0, 0.0, 1.0], help="slice normal")
    p.add_argument("--png", help="save a screenshot here and exit")
    p.add_argument("--size", nargs=2, type=int, default=[1200, 900], help="screenshot size in pixels")
    return p.parse_args()


def pick_array(reader, wanted):
    names = list(reader.CellData.keys())
    if wanted:
        if wanted not in names:
            sys.exit("no cell array %r in the file (have: %s)" % (wanted, ", ".join(names)))
        return wanted
    for prefix in ("Fluence", "Exit fluence", "Dose", "Energy", "Absorbed"):
        for n in names:
            if n.startswith(prefix):
                return n
    others = [n for n in names if n != "Region"]
    return others[0] if others else "Region"


def region_threshold(source, region):
    # ParaView 5.10 replaced ThresholdRange with LowerThreshold/UpperThreshold.
    t = Threshold(Input=source, Scalars=["CELLS", "Region"])
    try:
        t.LowerThreshold = region
        t.UpperThreshold = region
    except AttributeError:
        t.ThresholdRange = [region, region]
    return t


def show_region_outlines(reader, view, origin, normal):
    if "Region" not in reader.CellData.keys():
        return
    lo, hi = reader.CellData["Region"].GetRange()
    for r in range(int(lo), int(hi) + 1):
        surface = ExtractSurface(Input=region_threshold(reader, r))
        cut = Slice(Input=surface)
        cut.SliceType = "Plane"
        cut.SliceType.Origin = origin
        cut.SliceType.Normal = normal
        d = Show(cut, view)
        d.ColorArrayName = [None, ""]  # plain black lines, not coloured by Region
        d.AmbientColor = d.DiffuseColor = [0.0, 0.0, 0.0]
        d.LineWidth = 2.0


def colour_log(display, view, reader, name):
    ColorBy(display, ("CELLS", name))
    lut = GetColorTransferFunction(name)
    lut.ApplyPreset("Viridis (matplotlib)", True)
    lut.AutomaticRescaleRangeMode = "Never"  # keep the range set here when the slice moves
    lo, hi = reader.CellData[name].GetRange()
    if hi > 0 and name != "Region":
        # A log scale needs lo > 0; fluence spans decades, but 6 are plenty to read a plan.
        lo = max(lo, hi * 1e-6) if lo > 0 else hi * 1e-6
        lut.RescaleTransferFunction(lo, hi)
        if hasattr(lut, "MapControlPointsToLogSpace"):
            lut.MapControlPointsToLogSpace()  # ParaView 5.10+: else the preset stays linear
        lut.UseLogScale = 1
    display.SetScalarBarVisibility(view, True)
    bar = GetScalarBar(lut, view)
    bar.Title = name
    bar.ComponentTitle = ""
    bar.TitleColor = [0.0, 0.0, 0.0]  # the default palette's white text vanishes on white
    bar.LabelColor = [0.0, 0.0, 0.0]
    bar.TitleFontSize = 16
    bar.LabelFontSize = 14
    bar.ScalarBarLength = 0.6
    bar.RangeLabelFormat = "%-#6.2g"
    if hi > 0 and name != "Region":
        # One label per decade: ParaView's automatic log ticks crowd into each other.
        bar.UseCustomLabels = 1
        bar.CustomLabels = [10.0 ** k for k in range(int(math.ceil(math.log10(lo))), int(math.floor(math.log10(hi))) + 1)]


def main():
    from_command_line = len(getattr(sys, "argv", [])) > 1  # pvpython with arguments, not the GUI
    if not hasattr(sys, "argv"):
        sys.argv = [""]
    args = parse_args()
    if not args.result:
        sys.exit("usage: pvpython paraview_view.py RESULT.vtu [--png out.png] (or set RESULT in the script)")
    reader = OpenDataFile(args.result)
    if reader is None:
        sys.exit("ParaView cannot open %s" % args.result)
    reader.UpdatePipeline()
    b = reader.GetDataInformation().GetBounds()
    centre = [(b[0] + b[1]) / 2, (b[2] + b[3]) / 2, (b[4] + b[5]) / 2]
    origin = args.origin or centre

    view = GetActiveViewOrCreate("RenderView")
    view.ViewSize = args.size  # screenshots at this size then keep the fonts' proportions
    view.Background = [1.0, 1.0, 1.0]
    try:
        view.UseColorPaletteForBackground = 0  # ParaView 5.10+: otherwise the palette wins
    except AttributeError:
        pass

    cut = Slice(Input=reader)
    cut.SliceType = "Plane"
    cut.SliceType.Origin = origin
    cut.SliceType.Normal = args.normal
    colour_log(Show(cut, view), view, reader, pick_array(reader, args.array))
    box = Show(Outline(Input=reader), view)
    box.AmbientColor = box.DiffuseColor = [0.3, 0.3, 0.3]
    show_region_outlines(reader, view, origin, args.normal)

    # Look straight at the slice from the normal's side.
    size = max(b[1] - b[0], b[3] - b[2], b[5] - b[4])
    n = args.normal
    view.CameraFocalPoint = origin
    view.CameraPosition = [origin[i] + 3 * size * n[i] for i in range(3)]
    view.CameraViewUp = [0.0, 1.0, 0.0] if abs(n[2]) > 0.9 else [0.0, 0.0, 1.0]
    view.CameraParallelProjection = 1
    view.ResetCamera()
    Render(view)

    if args.png:
        SaveScreenshot(args.png, view, ImageResolution=args.size)
        print("wrote %s" % args.png)
    elif from_command_line:
        from paraview.simple import Interact  # ParaView 5.7+: a window until it is closed
        Interact(view)


if __name__ == "__main__":
    main()
