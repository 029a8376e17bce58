// Command launcher is pinfold's CLI: flag parsing, help text and exit codes.
// The work lives in the policy and launcher packages.
//
// # Limitations
//
//   - Launching an agent (wrapper mode) is not in this version yet: the
//     launch line is refused with exit code 120 and nothing is started.
package main
