# Kokkos >= 4.6 is required. An installed Kokkos is used when CMake finds it (Kokkos_ROOT,
# CMAKE_PREFIX_PATH, system paths). With -DKSSIM_FETCH_KOKKOS=ON and internet access, a pinned upstream
# release is downloaded and built instead; CI never does this.
find_package(Kokkos 4.6 QUIET)
if(Kokkos_FOUND)
  message(STATUS "kssim: using Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR} (devices: ${Kokkos_DEVICES})")
elseif(KSSIM_FETCH_KOKKOS)
  include(FetchContent)
  FetchContent_Declare(Kokkos
    URL https://github.com/kokkos/kokkos/releases/download/4.7.01/kokkos-4.7.01.tar.gz
    URL_HASH SHA256=404cf33e76159e83b8b4ad5d86f6899a442b6da6d2f7f68e2f8d8ec0e4f9d7a6)
  FetchContent_MakeAvailable(Kokkos)
  message(STATUS "kssim: building the downloaded Kokkos 4.7.01")
else()
  message(FATAL_ERROR "kssim needs Kokkos >= 4.6. Point Kokkos_ROOT at an installation, run the build "
                      "through cmake/dev-env (it provides one), or pass -DKSSIM_FETCH_KOKKOS=ON.")
endif()
