// Package pinfold holds the project's documents that the launcher
// carries: SECURITY.md, which `launcher site build` renders as the
// threat model. The code is in the packages beneath.
package pinfold

import _ "embed"

// SecurityMD is SECURITY.md as this launcher was built with it.
//
//go:embed SECURITY.md
var SecurityMD []byte
