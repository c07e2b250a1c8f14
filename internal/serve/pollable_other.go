//go:build !unix

package serve

import "os"

// Pollable returns f as it is: only Unix pipes and sockets are made
// pollable (see pollable_unix.go).
func Pollable(f *os.File) (*os.File, func()) { return f, func() {} }
