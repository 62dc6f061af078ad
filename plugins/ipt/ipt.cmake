# SPDX-License-Identifier: GPL-3.0-or-later
# The code the IP transports share (plugins/ipt): one static PIC library
# linked into libtransport_udp.so and libtransport_tcp.so. Each of their
# CMakeLists.txt includes this file; the guard makes the second a no-op.
include(${CMAKE_CURRENT_LIST_DIR}/../common/common.cmake)
if(NOT TARGET ferry_ipt)
  add_library(ferry_ipt STATIC
    ${CMAKE_CURRENT_LIST_DIR}/ipt_addr.c
    ${CMAKE_CURRENT_LIST_DIR}/ipt_cfg.c
    ${CMAKE_CURRENT_LIST_DIR}/ipt.c)
  target_include_directories(ferry_ipt PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(ferry_ipt PUBLIC ferry_plugin_common)
endif()
