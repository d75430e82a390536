# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Finds the PyTorch that Python 3 imports, for the binding (src/python). Included at directory scope:
# PyTorch's own CMake package enables the CUDA language when PyTorch is a CUDA build, which CMake allows
# only there. Sets
#   KSSIM_TORCH_FOUND         ON when the target below exists
#   KSSIM_TORCH_WHY           why not, otherwise
#   KSSIM_TORCH_VERSION       torch.__version__
#   KSSIM_TORCH_CUDA          ON when PyTorch is a CUDA build
#   KSSIM_TORCH_HOW           which of the two ways below found it
#   kssim_torch_libraries     an INTERFACE target: PyTorch's headers, libraries and flags (no libtorch_python)
#
# 1. find_package(Torch) with torch.utils.cmake_prefix_path on CMAKE_PREFIX_PATH (pip wheels ship the
#    package there; Debian's is on the default search path). A CUDA PyTorch's package needs a CUDA compiler.
# 2. Otherwise the paths torch.utils.cpp_extension gives extensions built without CMake: its include and
#    library folders and its C++ ABI flag (plus CUDA's runtime headers from find_package(CUDAToolkit)).
#    -DKSSIM_TORCH_FROM_EXTENSION_PATHS=ON skips way 1.
set(KSSIM_TORCH_FOUND OFF)
set(KSSIM_TORCH_CUDA OFF)
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  set(KSSIM_TORCH_WHY "no Python 3 interpreter was found")
  return()
endif()

# _kssim_torch_query(<python code> <var>...): runs the code after `import torch`; it prints one answer per
# <var> on lines that start with "kssim:" (importing torch may print other things). Sets each <var>, and
# _kssim_ok to whether every answer came.
function(_kssim_torch_query code)
  execute_process(COMMAND "${Python3_EXECUTABLE}" -c "import torch\n${code}"
                  OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(REGEX MATCHALL "kssim:[^\n]*" answers "${text}")
  list(LENGTH answers got)
  list(LENGTH ARGN wanted)
  set(_kssim_ok OFF PARENT_SCOPE)
  if(NOT rc EQUAL 0 OR NOT got EQUAL wanted)
    return()
  endif()
  foreach(var IN LISTS ARGN)
    list(POP_FRONT answers answer)
    string(SUBSTRING "${answer}" 6 -1 answer)
    set(${var} "${answer}" PARENT_SCOPE)
  endforeach()
  set(_kssim_ok ON PARENT_SCOPE)
endfunction()

_kssim_torch_query(
  "print('kssim:' + torch.__version__); print('kssim:' + torch.utils.cmake_prefix_path); print('kssim:' + (torch.version.cuda or ''))"
  KSSIM_TORCH_VERSION _kssim_torch_prefix _kssim_torch_cuda_version)
if(NOT _kssim_ok)
  set(KSSIM_TORCH_WHY "${Python3_EXECUTABLE} cannot import torch")
  return()
endif()
if(_kssim_torch_cuda_version)
  set(KSSIM_TORCH_CUDA ON)
endif()

add_library(kssim_torch_libraries INTERFACE)
# PyTorch's CUDA headers (c10/cuda, ATen/cuda) include the CUDA runtime's: with CUDA tensors in use, its
# include directory and library come from the toolkit (TorchConfig's targets do not carry them everywhere:
# the H200's pip torch 2.11 did not).
if(KSSIM_TORCH_CUDA AND Kokkos_ENABLE_CUDA)
  find_package(CUDAToolkit REQUIRED)
  target_link_libraries(kssim_torch_libraries INTERFACE CUDA::cudart)
endif()

# 1. PyTorch's CMake package.
set(_kssim_torch_package_usable ON)
if(KSSIM_TORCH_CUDA AND NOT CMAKE_CUDA_COMPILER)
  include(CheckLanguage)
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    set(_kssim_torch_package_usable OFF)  # its config would stop at enable_language(CUDA)
  endif()
endif()
if(_kssim_torch_package_usable AND NOT KSSIM_TORCH_FROM_EXTENSION_PATHS)
  list(APPEND CMAKE_PREFIX_PATH "${_kssim_torch_prefix}")
  find_package(Torch CONFIG QUIET)
  if(TORCH_FOUND)
    target_link_libraries(kssim_torch_libraries INTERFACE ${TORCH_LIBRARIES})
    set(KSSIM_TORCH_HOW "find_package(Torch) in ${Torch_DIR}")
    set(KSSIM_TORCH_FOUND ON)
    return()
  endif()
endif()

# 2. torch.utils.cpp_extension's paths.
_kssim_torch_query(
  "from torch.utils import cpp_extension as ext; print('kssim:' + ','.join(ext.include_paths())); print('kssim:' + ','.join(ext.library_paths())); print('kssim:' + str(int(torch._C._GLIBCXX_USE_CXX11_ABI)))"
  _kssim_torch_includes _kssim_torch_libdirs _kssim_torch_abi)
if(NOT _kssim_ok)
  set(KSSIM_TORCH_WHY "neither find_package(Torch) nor torch.utils.cpp_extension's paths worked")
  return()
endif()
string(REPLACE "," ";" _kssim_torch_includes "${_kssim_torch_includes}")
string(REPLACE "," ";" _kssim_torch_libdirs "${_kssim_torch_libdirs}")
set(_kssim_torch_names c10 torch_cpu torch)
if(KSSIM_TORCH_CUDA AND Kokkos_ENABLE_CUDA)
  list(APPEND _kssim_torch_names c10_cuda torch_cuda)
endif()
foreach(name IN LISTS _kssim_torch_names)
  find_library(KSSIM_TORCH_LIBRARY_${name} ${name} HINTS ${_kssim_torch_libdirs})
  if(NOT KSSIM_TORCH_LIBRARY_${name})
    set(KSSIM_TORCH_WHY "lib${name} is not in torch.utils.cpp_extension.library_paths() (${_kssim_torch_libdirs})")
    return()
  endif()
  target_link_libraries(kssim_torch_libraries INTERFACE ${KSSIM_TORCH_LIBRARY_${name}})
endforeach()
target_include_directories(kssim_torch_libraries SYSTEM INTERFACE ${_kssim_torch_includes})
target_compile_definitions(kssim_torch_libraries INTERFACE _GLIBCXX_USE_CXX11_ABI=${_kssim_torch_abi})
set(KSSIM_TORCH_HOW "torch.utils.cpp_extension paths ${_kssim_torch_libdirs}")
set(KSSIM_TORCH_FOUND ON)
