# SPDX-License-Identifier: GPL-3.0-or-later
# Code every transport plugin shares (plugins/common): one static PIC
# library linked into each libtransport_*.so. Included by each plugin's
# CMakeLists.txt; the guard makes the repeats no-ops.
if(NOT TARGET ferry_plugin_common)
  add_library(ferry_plugin_common STATIC ${CMAKE_CURRENT_LIST_DIR}/plog.c)
  target_include_directories(ferry_plugin_common PUBLIC
    ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(ferry_plugin_common PUBLIC ferry_lib)
endif()
