/* The ksched binary: the command line lives in libksched (src/cmd/cli.c). */
#include <ksched/ksched.h>

int main(int argc, char **argv) { return ks_main(argc, argv); }
