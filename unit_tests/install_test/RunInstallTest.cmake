# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Driver of the kssim_install_consumer test (run with cmake -P; see CMakeLists.txt for the variables).
cmake_minimum_required(VERSION 3.22)

foreach(var KSSIM_BUILD_DIR PREFIX CONSUMER_SOURCE_DIR CONSUMER_BINARY_DIR GENERATOR CXX_COMPILER)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "RunInstallTest.cmake: ${var} is not set")
  endif()
endforeach()

function(step name)
  list(JOIN ARGN " " command_line)
  message(STATUS "install test: ${name}: ${command_line}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "install test: ${name} failed (${rc})")
  endif()
endfunction()

set(config_args)
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()

# 1. Install the build tree into a fresh prefix (stale files from an earlier run must not hide a
#    missing install rule).
file(REMOVE_RECURSE "${PREFIX}" "${CONSUMER_BINARY_DIR}" "${CONSUMER_BINARY_DIR}-mpi")
step("cmake --install" ${CMAKE_COMMAND} --install "${KSSIM_BUILD_DIR}" --prefix "${PREFIX}" ${config_args})

foreach(required include/kssim/kssim.hpp)
  if(NOT EXISTS "${PREFIX}/${required}")
    message(FATAL_ERROR "install test: ${required} was not installed into ${PREFIX}")
  endif()
endforeach()
file(GLOB_RECURSE config_files "${PREFIX}/*/kssimConfig.cmake")
if(NOT config_files)
  message(FATAL_ERROR "install test: no kssimConfig.cmake under ${PREFIX}")
endif()
# Nothing outside the usual folders (a Python package at <prefix>/kssim, say).
file(GLOB top_level RELATIVE "${PREFIX}" "${PREFIX}/*")
foreach(entry IN LISTS top_level)
  if(NOT entry MATCHES "^(include|lib|lib64|bin|share)$")
    message(FATAL_ERROR "install test: the install wrote '${PREFIX}/${entry}' (only include, lib, bin, share)")
  endif()
endforeach()
file(GLOB_RECURSE mpi_targets "${PREFIX}/*/kssimMpiTargets.cmake")

# 2. Configure and build the consumer against the installed package only.
set(configure_args
  -S "${CONSUMER_SOURCE_DIR}" -G "${GENERATOR}"
  "-DCMAKE_PREFIX_PATH=${PREFIX}"
  "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
  "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
  "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF")
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(CONFIG)
  # -O0: this checks the package (the exported target, the installed headers, the link), not code generation.
  string(TOUPPER "${CONFIG}" config_upper)
  list(APPEND configure_args "-DCMAKE_BUILD_TYPE=${CONFIG}" "-DCMAKE_CXX_FLAGS_${config_upper}=-O0")
endif()
if(Kokkos_DIR)
  list(APPEND configure_args "-DKokkos_DIR=${Kokkos_DIR}")
endif()
# kssim::kssim needs Kokkos only: the consumer is configured with MPI hidden from CMake.
step("configure the consumer" ${CMAKE_COMMAND} ${configure_args} -B "${CONSUMER_BINARY_DIR}"
     -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON)

# The consumer must have found the installed package, not a build tree or another installation.
file(STRINGS "${CONSUMER_BINARY_DIR}/CMakeCache.txt" kssim_dir_line REGEX "^kssim_DIR:")
string(REGEX REPLACE "^kssim_DIR:[A-Z]+=" "" kssim_dir "${kssim_dir_line}")
file(REAL_PATH "${PREFIX}" real_prefix)
file(REAL_PATH "${kssim_dir}" real_kssim_dir)
string(FIND "${real_kssim_dir}/" "${real_prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "install test: the consumer found kssim in '${kssim_dir}', not under ${PREFIX}")
endif()

step("build the consumer" ${CMAKE_COMMAND} --build "${CONSUMER_BINARY_DIR}" ${config_args})

# 3. Run it.
# The built program `name` of the consumer build in `dir` (multi-config generators put it in a CONFIG folder).
function(consumer_program dir name out)
  if(CONFIG AND EXISTS "${dir}/${CONFIG}/${name}${CMAKE_EXECUTABLE_SUFFIX}")
    set(${out} "${dir}/${CONFIG}/${name}${CMAKE_EXECUTABLE_SUFFIX}" PARENT_SCOPE)
  else()
    set(${out} "${dir}/${name}${CMAKE_EXECUTABLE_SUFFIX}" PARENT_SCOPE)
  endif()
endfunction()
consumer_program("${CONSUMER_BINARY_DIR}" app app)
step("run the consumer" "${app}")

# 4. Where kssim was built with MPI: a consumer of find_package(kssim COMPONENTS mpi) and kssim::mpi,
#    run as a single process (Open MPI's singleton start; root allowed, shared memory only, as the MPI tests).
if(mpi_targets)
  file(REMOVE_RECURSE "${CONSUMER_BINARY_DIR}-mpi")
  step("configure the MPI consumer" ${CMAKE_COMMAND} ${configure_args} -B "${CONSUMER_BINARY_DIR}-mpi"
       -DCONSUMER_WITH_MPI=ON)
  step("build the MPI consumer" ${CMAKE_COMMAND} --build "${CONSUMER_BINARY_DIR}-mpi" ${config_args})
  consumer_program("${CONSUMER_BINARY_DIR}-mpi" app_mpi app_mpi)
  step("run the MPI consumer" ${CMAKE_COMMAND} -E env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
       HWLOC_HIDE_ERRORS=2 OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,sm "OMPI_MCA_osc=^ucx" "OMPI_MCA_coll=^ucc,hcoll"
       "${app_mpi}")
else()
  message(STATUS "install test: this build has no MPI component; the MPI consumer is not built")
endif()
message(STATUS "install test: passed")
