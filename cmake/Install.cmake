# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs the headers and an exported CMake package: find_package(kssim) gives kssim::kssim, which needs only
# Kokkos; find_package(kssim COMPONENTS mpi) also gives kssim::mpi (when the build had MPI), and only then
# looks for MPI. Two export sets, so that a consumer without MPI never loads a target that names it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS kssim EXPORT kssimTargets)
if(KSSIM_HAS_MPI)
  install(TARGETS kssim_mpi EXPORT kssimMpiTargets)  # kssim::mpi
  install(EXPORT kssimMpiTargets NAMESPACE kssim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kssim)
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/kssim DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT kssimTargets NAMESPACE kssim:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kssim)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/kssimConfig.cmake.in
  ${PROJECT_BINARY_DIR}/kssimConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kssim)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/kssimConfigVersion.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${PROJECT_BINARY_DIR}/kssimConfig.cmake ${PROJECT_BINARY_DIR}/kssimConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/kssim)
