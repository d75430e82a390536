# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Kokkos >= 4.6 is required. An installed Kokkos is used when CMake finds it (Kokkos_ROOT,
# CMAKE_PREFIX_PATH, system paths). With -DKSSIM_FETCH_KOKKOS=ON and internet access, a pinned upstream
# release is downloaded and built instead; CI never does this.
find_package(Kokkos 4.6 QUIET)
if(Kokkos_FOUND)
  message(STATUS "kssim: using Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR} (devices: ${Kokkos_DEVICES})")
elseif(KSSIM_FETCH_KOKKOS)
  include(FetchContent)
  # The release tarball of Kokkos 4.7.01 (the first release with the CUDA 13 API changes). Its SHA256 is
  # the one published by Spack's kokkos package (version("4.7.01", sha256=...)) and by Homebrew's kokkos
  # formula for this same URL.
  FetchContent_Declare(Kokkos
    URL https://github.com/kokkos/kokkos/releases/download/4.7.01/kokkos-4.7.01.tar.gz
    URL_HASH SHA256=404cf33e76159e83b8b4ad5d86f6899d442b5da4624820ab457412116cdcd201)
  FetchContent_MakeAvailable(Kokkos)
  message(STATUS "kssim: building the downloaded Kokkos 4.7.01")
else()
  message(FATAL_ERROR "kssim needs Kokkos >= 4.6. Point Kokkos_ROOT at an installation, run the build "
                      "through cmake/dev-env (it provides one), or pass -DKSSIM_FETCH_KOKKOS=ON.")
endif()
