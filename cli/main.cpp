#include <iostream>

#include "cli/cli.h"

int main(int argc, char** argv) { return kl::cli::runMain(argc, argv, std::cout, std::cerr); }
