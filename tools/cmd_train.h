/*
 * cmd_train.h - `simdbpe train`: train a byte-level BPE vocabulary.
 */
#ifndef SIMDBPE_CMD_TRAIN_H
#define SIMDBPE_CMD_TRAIN_H

/*
 * Runs `simdbpe train`. argv[0] is the command name ("train"), the options
 * and files follow. Returns the exit code: 0 success, 1 bad input or
 * failure, 2 bad usage.
 */
int simdbpe_cmd_train(int argc, char **argv);

#endif
