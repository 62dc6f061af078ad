/* SPDX-License-Identifier: GPL-3.0-or-later */
/* ferryd's entry point, daemon layer: the daemon is ferryd_main()
 * (ferryd.c), which test builds call as well. */
#include "daemon/ferryd.h"

int
main(int argc, char **argv)
{
	return ferryd_main(argc, argv);
}
