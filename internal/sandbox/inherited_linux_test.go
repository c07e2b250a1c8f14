package sandbox

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestCloseInherited: a descriptor without close-on-exec, as granite's
// caller may leave one (the red team read a secret through fd 7 from an
// agent), reaches a child before CloseInherited and not after it.
func TestCloseInherited(t *testing.T) {
	secret := t.TempDir() + "/secret"
	if err := os.WriteFile(secret, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(secret)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	reaches := func() bool {
		out, err := exec.Command("sh", "-c", "ls /proc/self/fd").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.Contains(" "+strings.Join(strings.Fields(string(out)), " ")+" ", " "+strconv.Itoa(fd)+" ")
	}
	if !reaches() {
		t.Skip("this system closes inherited descriptors on exec already")
	}
	CloseInherited()
	if reaches() {
		t.Errorf("fd %d still reaches a child after CloseInherited", fd)
	}
}
