//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"time"
)

// Available: namespaces are Linux's.
func Available() (bool, string) { return false, "namespaces are a Linux feature" }

// Private is a trial's private folder.
type Private struct{ Dir, Hide string }

// MkdirPrivate makes a new private folder for one trial.
func MkdirPrivate(pattern string) (*Private, error) {
	dir, err := os.MkdirTemp("", "granite-"+pattern)
	if err != nil {
		return nil, err
	}
	return &Private{Dir: dir}, nil
}

// Remove removes the folder.
func (p *Private) Remove() { os.RemoveAll(p.Dir) }

// Run runs s to its end; outside Linux, without any containment.
func Run(ctx context.Context, mode Mode, s Program, stdout, stderr io.Writer, waitDelay time.Duration) Result {
	var res Result
	cmd := exec.CommandContext(ctx, s.Argv[0], s.Argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr, cmd.WaitDelay = s.Dir, s.Env, stdout, stderr, waitDelay
	if err := cmd.Start(); err != nil {
		res.StartErr = err
		return res
	}
	res.Started = time.Now()
	err := cmd.Wait()
	res.Exited = time.Now()
	res.Killed = ctx.Err() != nil
	res.ExitCode = cmd.ProcessState.ExitCode()
	if err != nil && !errors.As(err, new(*exec.ExitError)) && !res.Killed {
		res.Err = err
	}
	return res
}

// CloseInherited does nothing where the system has no /proc/self/fd to
// list descriptors from.
func CloseInherited() {}
