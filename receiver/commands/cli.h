/* cli.h -- the receiver's subcommands (serve, check, advertise, budgets) as the binary
 * runs them */
#ifndef GVW_CLI_H
#define GVW_CLI_H

/*
 * Each takes the arguments after the subcommand's name (settings flags and
 * its own options), runs it, and returns the exit status: 0 done, 1 failed,
 * 2 bad usage or a bad setting (one line on stderr naming it).
 */
int receiver_cmd_serve(int argc, char **argv);
int receiver_cmd_check(int argc, char **argv);
int receiver_cmd_advertise(int argc, char **argv);
int receiver_cmd_budgets(int argc, char **argv);

#endif
