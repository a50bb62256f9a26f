// SPDX-License-Identifier: GPL-3.0-or-later
// SWIG interface of the FullMonte Tcl package. SWIG (as in FullMonte) gives the conventions
// FullMonte scripts rely on: `ClassName obj args`, `obj method args`, getter/setter by arity, and
// returned objects as `_<hex>_p_<Type>` handles that are themselves commands. The adapter classes
// (Tcl/Tcl*.hpp) sit in the global namespace so handles read _p_TetraMesh, not _p_ns__TetraMesh.
%module FullMonte

%{
#include <tcl.h>
#include "Common/Errors.hpp"
#include "Storage/MCML/MCMLFormatError.hpp"
#include "Tcl/TclGeometry.hpp"
#include "Tcl/TclSources.hpp"
#include "Tcl/TclOutputs.hpp"
#include "Tcl/TclKernels.hpp"
#include "Tcl/TclTraces.hpp"
#include "Tcl/TclDetectors.hpp"
#include "Tcl/TclDetected.hpp"
#include "Tcl/TclQueries.hpp"
#include "Tcl/TclStorage.hpp"
#include "Tcl/TclBatch.hpp"
#include "Tcl/TclMeshCheck.hpp"
#include "Tcl/TclSummary.hpp"
#include "Tcl/TclCOMSOL.hpp"
#ifdef FM_TCL_VTK
#include "Tcl/TclVTK.hpp"
#include "Tcl/TclVTKCompat.hpp"
#include "Tcl/TclVTKPipeline.hpp"
#endif
#ifdef FM_TCL_MESH
#include "Tcl/TclMeshing.hpp"
#endif
#ifdef FM_TCL_MCML
#include "Tcl/TclMCML.hpp"
#include "Tcl/TclMCMLTraces.hpp"
#endif
#ifdef FM_TCL_PLANNING
#include "Tcl/TclPlanning.hpp"
#endif

// C++ errors become Tcl errors carrying the message; errorCode says which kind, so scripts can
// `catch ... opts` and test [dict get $opts -errorcode].
static void fmTclError(Tcl_Interp* interp, const char* kind, const char* msg) {
    Tcl_SetObjResult(interp, Tcl_NewStringObj(msg, -1));
    Tcl_SetErrorCode(interp, "FULLMONTE", kind, msg, (char*)NULL);
}
%}

%include <std_string.i>
%include "Tcl/TclHandles.i"
%include "Tcl/TclIntegers.i"
%include "Tcl/TclReals.i"

%exception {
    try {
        $action
    } catch (const fm::FormatError& e) {
        fmTclError(interp, "FORMAT", e.what());
        SWIG_fail;
    } catch (const MCMLFormatError& e) {
        fmTclError(interp, "FORMAT", e.what());
        SWIG_fail;
    } catch (const fm::ModelError& e) {
        fmTclError(interp, "MODEL", e.what());
        SWIG_fail;
    } catch (const fm::ParameterError& e) {
        fmTclError(interp, "PARAMETER", e.what());
        SWIG_fail;
    } catch (const std::bad_alloc&) {
        fmTclError(interp, "MEMORY", "out of memory (a memory allocation failed); use a smaller model, fewer "
                                     "threads or fewer bins, or raise the memory limit");
        SWIG_fail;
    } catch (const std::exception& e) {
        fmTclError(interp, "ERROR", e.what());
        SWIG_fail;
    }
}

// Returned objects: the most-derived class, as a command (SWIG's own %factory makes plain
// pointer strings in Tcl, which could not be called as `$handle method`).
%define %fm_dispatch(Type)
if (!dcast) {
    Type* dobj = dynamic_cast<Type*>($1);
    if (dobj) {
        dcast = 1;
        %set_output(SWIG_NewInstanceObj(SWIG_as_voidptr(dobj), $descriptor(Type*), $owner));
    }
}
%enddef
%define %fm_factory(Method, Types...)
%typemap(out) Method {
    int dcast = 0;
    %formacro(%fm_dispatch, Types)
    if (!dcast) %set_output(SWIG_NewInstanceObj(SWIG_as_voidptr($1), $descriptor, $owner));
}
%enddef

%fm_factory(Source* Composite::get, SurfaceTri, Point, Ball, Line, PencilBeam, Volume, Surface, Composite, Cylinder, Fiber, Disk, Planar);
%fm_factory(Source* Kernel::source, SurfaceTri, Point, Ball, Line, PencilBeam, Volume, Surface, Composite, Cylinder, Fiber, Disk, Planar);
%fm_factory(Source* TIMOSSourceReader::source, SurfaceTri, Point, Ball, Line, PencilBeam, Volume, Surface, Composite, Cylinder, Fiber, Disk, Planar);
#ifdef FM_TCL_MCML
%fm_factory(OutputData* OutputDataCollection::getByName, SpatialMap, DoseHistogram, MCEventCounts, ConservationCounts, DirectedSurface, MCMLOutput, PacketPositionTraceSet);
%fm_factory(OutputData* OutputDataCollection::getByType, SpatialMap, DoseHistogram, MCEventCounts, ConservationCounts, DirectedSurface, MCMLOutput, PacketPositionTraceSet);
%fm_factory(OutputData* OutputDataCollection::getByIndex, SpatialMap, DoseHistogram, MCEventCounts, ConservationCounts, DirectedSurface, MCMLOutput, PacketPositionTraceSet);
%fm_factory(OutputData* OutputDataCollection::current, SpatialMap, DoseHistogram, MCEventCounts, ConservationCounts, DirectedSurface, MCMLOutput, PacketPositionTraceSet);
#else
%fm_factory(OutputData* OutputDataCollection::getByName, SpatialMap, DoseHistogram, MCEventCounts, ConservationCounts, DirectedSurface, PacketPositionTraceSet);
%fm_factory(OutputData* OutputDataCollection::getByType, SpatialMap, DoseHistogram, MCEventCounts, ConservationCounts, DirectedSurface, PacketPositionTraceSet);
%fm_factory(OutputData* OutputDataCollection::getByIndex, SpatialMap, DoseHistogram, MCEventCounts, ConservationCounts, DirectedSurface, PacketPositionTraceSet);
%fm_factory(OutputData* OutputDataCollection::current, SpatialMap, DoseHistogram, MCEventCounts, ConservationCounts, DirectedSurface, PacketPositionTraceSet);
#endif

// Every returned object is a fresh handle owned by Tcl (it shares the data it refers to), so a
// handle never dangles, whatever happens to the object it came from.
%newobject TetraMesh::regions;
%newobject TetraMesh::points;
%newobject TetraMesh::tetraCells;
%newobject TetraMesh::internalFacesForFluenceCounting;
%newobject MaterialSet::exterior;
%newobject MaterialSet::material;
%newobject BoxMeshBuilder::mesh;
%newobject Composite::get;
%newobject SurfaceSourceBuilder::output;
%newobject SpatialMap::mesh;
%newobject SpatialMap::standardError;
%newobject OutputDataCollection::getByName;
%newobject OutputDataCollection::getByType;
%newobject OutputDataCollection::getByIndex;
%newobject OutputDataCollection::current;
%newobject Kernel::geometry;
%newobject Kernel::materials;
%newobject Kernel::source;
%newobject Kernel::results;
%newobject TetraInternalKernel::directedSurfaceScorer;
%newobject EnergyToFluence::result;
%newobject DoseHistogramCollection::get;
%newobject DoseHistogramCollection::forRegion;
%newobject DoseVolumeHistogramGenerator::result;
%newobject WeightedMapSum::result;
%newobject CheckedMeshReader::mesh;
%newobject TIMOSMeshReader::mesh;
%newobject BinaryMeshReader::mesh;
%newobject TIMOSMaterialReader::materials;
%newobject TIMOSSourceReader::source;

// Objects only C++ creates (reader, kernel and query results): no Tcl constructor.
%nodefaultctor FileIO;
%nodefaultctor CheckedMeshReader;
%nodefaultctor Kernel;
%nodefaultctor Source;
%nodefaultctor Partition;
%nodefaultctor Points;
%nodefaultctor TetraCells;
%nodefaultctor FaceList;
%nodefaultctor OutputData;
%nodefaultctor MCEventCounts;
%nodefaultctor ConservationCounts;
%nodefaultctor SpatialMap;
%nodefaultctor DirectedSurface;
%nodefaultctor DirectedSurfaceScorer;
%nodefaultctor DoseHistogram;
%nodefaultctor DoseHistogramCollection;

%include "Tcl/TclGeometry.hpp"
%include "Tcl/TclSources.hpp"
%include "Tcl/TclOutputs.hpp"
%include "Tcl/TclKernels.hpp"
%include "Tcl/TclQueries.hpp"
%include "Tcl/TclStorage.hpp"

// ---- Packet traces (issue 5): TetraTraceKernel and its PacketTraces output
// (Tcl/TclTraces.hpp). ----
%nodefaultctor PacketPositionTraceSet;
%include "Tcl/TclTraces.hpp"
// ---- end packet traces ----

// ---- Surface detectors (issue 28): TetraDetectorKernel (Tcl/TclDetectors.hpp). ----
%newobject TetraDetectorKernel::detected;
%include "Tcl/TclDetectors.hpp"
// Detected-packet records per record (Tcl/TclDetected.hpp): from a .fmd file or a kernel's run.
%include "Tcl/TclDetected.hpp"

// ---- VTK (Storage/VTK): wrapped only when its library is built (FM_USE_VTK ON);
// see Tcl/CMakeLists.txt. ----
#ifdef FM_TCL_VTK
%newobject VTKMeshReader::mesh;
%newobject VTKMeshReader::cellData;
%include "Tcl/TclVTK.hpp"

// ---- FullMonte 2018 VTK commands (issue 5): vtkFullMonte* and the VTK readers/writers their
// scripts use, as FMvtk* classes; FullMonte.tcl names them vtk* (Tcl/TclVTKCompat.hpp). ----
%nodefaultctor FMvtkDataArray;
%nodefaultctor FMvtkDataSetAttributes;
%nodefaultctor FMvtkDataSet;
%nodefaultctor FMvtkWriter;
%nodefaultctor FMvtkAlgorithmOutput;
%newobject FMvtkDataSetAttributes::GetArray;
%newobject FMvtkDataSet::GetCellData;
%newobject FMvtkDataSet::GetPointData;
%newobject FMvtkUnstructuredGridReader::GetOutput;
%newobject FMvtkPolyDataReader::GetOutput;
%newobject FMvtkFullMonteTetraMeshWrapper::blankMesh;
%newobject FMvtkFullMonteTetraMeshWrapper::regionMesh;
%newobject FMvtkFullMonteTetraMeshWrapper::regions;
%newobject FMvtkFullMonteTetraMeshWrapper::faces;
%newobject FMvtkFullMonteArrayAdaptor::array;
%newobject FMvtkFullMonteMeshFromUnstructuredGrid::mesh;
%newobject FMvtkFullMonteMeshFromUnstructuredGrid::meshPtr;
%newobject FMvtkFullMontePacketPositionTraceSetToPolyData::getPolyData;
%include "Tcl/TclVTKCompat.hpp"
// ---- vtkFieldData, vtkDataObject, vtkMergeDataObjectFilter (issue 25, Tcl/TclVTKPipeline.hpp) ----
%newobject FMvtkFieldData::GetArray;
%newobject FMvtkDataObject::GetFieldData;
%newobject FMvtkMergeDataObjectFilter::GetOutput;
%newobject FMvtkMergeDataObjectFilter::GetOutputPort;
%fm_factory(FMvtkDataSet* FMvtkMergeDataObjectFilter::GetOutput, FMvtkUnstructuredGrid, FMvtkPolyData);
%include "Tcl/TclVTKPipeline.hpp"
// ---- end FullMonte 2018 VTK commands ----
#endif

// ---- MCML (layered model): wrapped when the core has it (Geometry/Layered.hpp). ----
#ifdef FM_TCL_MCML
%newobject Layered::layer;
%newobject MCMLCase::geometry;
%newobject MCMLCase::materials;
%newobject MCMLInputReader::get;
%newobject MCMLInputReader::current;
%newobject MCMLOutputReader::result;
%newobject MCMLKernel::geometry;
%newobject MCMLKernel::detected;
%nodefaultctor MCMLCase;
%nodefaultctor MCMLOutput;
%include "Tcl/TclMCML.hpp"
// ---- MCMLKernelWithTraces (issue 5, Tcl/TclMCMLTraces.hpp) ----
%include "Tcl/TclMCMLTraces.hpp"
#endif

// ---- Batches (issue 9, Kernels/Batch.hpp): BatchRunner, one run per source (x material set),
// `B result i` an OutputDataCollection per run, `B fluenceMatrix file`. ----
%newobject BatchRunner::geometry;
%newobject BatchRunner::materials;
%newobject BatchRunner::result;
%include "Tcl/TclBatch.hpp"

// ---- Mesh checks and repair (issue 23, Tcl/TclMeshCheck.hpp): MeshRepair, FullMonte_warnings. ----
%newobject MeshRepair::result;
%include "Tcl/TclMeshCheck.hpp"
// ---- OutputDataSummarize (issue 25, Tcl/TclSummary.hpp; FullMonte.tcl prints `visit`) ----
%include "Tcl/TclSummary.hpp"
// ---- COMSOLMeshReader/Writer (issue 25, Tcl/TclCOMSOL.hpp) ----
%newobject COMSOLMeshReader::mesh;
%include "Tcl/TclCOMSOL.hpp"
// ---- Planning (issue 24, Planning/): PlanOptimizer over BatchRunners' results. ----
#ifdef FM_TCL_PLANNING
%newobject PlanOptimizer::dose;
%include "Tcl/TclPlanning.hpp"  // PlanOptimizer, DoseSlicePicture
#endif
// ---- Meshing (issue 23, Geometry/Meshing): ImageMesher and SurfaceMesher, CGAL builds only. ----
#ifdef FM_TCL_MESH
%newobject MesherSettings::mesh;
%nodefaultctor MesherSettings;
%include "Tcl/TclMeshing.hpp"
#endif
