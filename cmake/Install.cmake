# Install layout (`cmake --install` / `make install PREFIX=…`) and the Debian package (`make package`).
#
#   <prefix>/bin/kernlens
#   <prefix>/share/kernlens/probe/        the Python probe (kernlens_probe/ with kernel_table.json, sitecustomize.py)
#   <prefix>/share/kernlens/queries/      our tree-sitter queries (also embedded in the binary)
#   <prefix>/share/doc/kernlens/          README, docs/, the Neovim helper (nvim/), copyright
#
# Contract: the binary finds its probe relative to its own executable — <exe dir>/share/kernlens/probe
# (the build tree) or <exe dir>/../share/kernlens/probe (an install) — never through the source tree
# (core/runner/backend.h findProbeDir). The build tree mirrors the layout, so both are tested.
include(GNUInstallDirs)

install(TARGETS kernlens RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY "${PROJECT_SOURCE_DIR}/core/runner/probe/"
        DESTINATION ${CMAKE_INSTALL_DATADIR}/kernlens/probe
        FILES_MATCHING PATTERN "*.py" PATTERN "*.json"
        PATTERN "__pycache__" EXCLUDE)
install(FILES ${KL_QUERY_FILES} DESTINATION ${CMAKE_INSTALL_DATADIR}/kernlens/queries)
install(FILES "${PROJECT_SOURCE_DIR}/README.md" DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES "${PROJECT_SOURCE_DIR}/LICENSE" DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/docs/" DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        PATTERN "*.png" EXCLUDE)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/editors/nvim" DESTINATION ${CMAKE_INSTALL_DOCDIR})

# --- Debian package: kernlens_<version>_amd64.deb -------------------------------------------------
# Depends: computed from the binary's shared libraries by dpkg-shlibdeps (libgit2, libsqlite3,
# libtree-sitter, zlib, libstdc++ … as Debian names them), plus python3 for the probe.
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "kernlens")
set(CPACK_PACKAGE_VENDOR "kernlens authors")
set(CPACK_PACKAGE_CONTACT "kernlens authors <kernlens@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "which Python line launched each GPU kernel (language server and CLI)")
set(CPACK_PACKAGE_DESCRIPTION
    "kernlens maps every GPU kernel of a PyTorch program to the Python line that launched it, by\n\
placing NVTX ranges in an overlay of the code and profiling in rounds (Nsight Systems, the\n\
PyTorch profiler, or an offline emulator). It shows GPU time per line in VS Code and Neovim\n\
(a language server) and on the command line, and analyses nsys and Kineto profiles.")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nsight-systems")
include(CPack)
