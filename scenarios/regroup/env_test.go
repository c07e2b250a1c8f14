package regroup_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/toolsrc"
	"github.com/mcpgranite/granite/scenarios/regroup"
)

// TestSourceGetsNoKeys starts a source the two ways granite starts one
// (toolsrc.Connect, for list, regroup, synth and run's artifacts, and the
// relay, for serve) with keys in granite's environment: none reaches it,
// but what finds programs does, and so does a variable the user names in
// GRANITE_SOURCE_ENV.
func TestSourceGetsNoKeys(t *testing.T) {
	t.Setenv("GRANITE_TOKEN", "granite-own-secret")
	t.Setenv("OPENAI_API_KEY", "sk-endpoint-secret")
	t.Setenv("MY_SERVER_KEY", "meant-for-the-server")
	t.Setenv(toolsrc.SourceEnvVar, "MY_SERVER_KEY")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	check := func(how, file string) {
		t.Helper()
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%s: the source wrote no environment: %v", how, err)
		}
		env := string(b)
		for _, secret := range []string{"granite-own-secret", "sk-endpoint-secret"} {
			if strings.Contains(env, secret) {
				t.Errorf("%s: the source got %q", how, secret)
			}
		}
		for _, want := range []string{"MY_SERVER_KEY=meant-for-the-server", "PATH="} {
			if !strings.Contains(env, want) {
				t.Errorf("%s: the source lacks %s", how, want)
			}
		}
	}
	dir := t.TempDir()
	script := func(file string) string {
		return "sh -c 'env > " + file + "; exec env GRANITE_FAKE_SOURCE=tools " + exe + "'"
	}
	connect := filepath.Join(dir, "connect.env")
	c, _, err := toolsrc.Connect(context.Background(), script(connect), "")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	check("connect", connect)

	iface, err := regroup.Build(fakeTools(), regroup.Derive("fake", fakeTools()))
	if err != nil {
		t.Fatal(err)
	}
	relayed := filepath.Join(dir, "relay.env")
	relay, err := iface.StartRelay(context.Background(), level.L4, script(relayed), "", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	relay.Close()
	check("relay", relayed)
}
