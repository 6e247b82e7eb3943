/* exporter.h -- `gpu-vram-watchdog exporter`: the node agent's loop, poll and HTTP */
#ifndef GVW_EXPORTER_H
#define GVW_EXPORTER_H

#include <stdio.h>

/*
 * Runs the exporter with the arguments after its name (settings flags).
 * Returns the exit status: 0 after SIGTERM/SIGINT, 1 when it cannot start
 * (the listener) or cannot schedule its next poll, 2 for a bad setting or
 * argument (one line on stderr).
 */
int exporter_main(int argc, char **argv);

/* Prints the exporter's own settings (for the binary's --help). */
void exporter_print_help(FILE *out);

#endif
