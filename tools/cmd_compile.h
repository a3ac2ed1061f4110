/*
 * cmd_compile.h - `simdbpe compile`: write a model as a compiled .sbpe file.
 */
#ifndef SIMDBPE_CMD_COMPILE_H
#define SIMDBPE_CMD_COMPILE_H

/*
 * Runs `simdbpe compile -m MODEL -o FILE.sbpe`. argv[0] is the command name
 * ("compile"), the options follow. Returns the exit code: 0 success, 1
 * failure, 2 bad usage.
 */
int simdbpe_cmd_compile(int argc, char **argv);

#endif
