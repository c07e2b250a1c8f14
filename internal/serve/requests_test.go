package serve

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
)

// TestVetNestedRequestIsLinear sends vetting a tools/call nested 9,000
// deep (under encoding/json's own bound of 10,000), with the number no
// float64 holds at the bottom: the red team's 20 KB request cost 159 MB
// when every level built its own path. Vetting must answer it, with the
// path, in memory proportional to the request.
func TestVetNestedRequestIsLinear(t *testing.T) {
	const depth = 9000
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":` +
		strings.Repeat("[", depth) + "1e400" + strings.Repeat("]", depth) + `}}}`
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, reply := vetMessage([]byte(body), false)
	runtime.ReadMemStats(&after)
	if !strings.Contains(string(reply), `argument \"a\": 1e400 is out of range`) {
		t.Fatalf("reply %.300s", reply)
	}
	// Decoding alone costs a few MB at this depth; the quadratic path
	// cost over 150 MB.
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("vetting %d bytes nested %d deep allocated %.1f MB", len(body), depth, float64(alloc)/(1<<20))
	if alloc > 32<<20 {
		t.Errorf("vetting a %d-byte request nested %d deep allocated %d MB; want it linear in the request", len(body), depth, alloc>>20)
	}
	if path, num := outOfRange(map[string]any{"a": []any{[]any{json.Number("1e400")}}}, "params"); path != "params.a[0][0]" || num != "1e400" {
		t.Errorf("path %q, number %q; want params.a[0][0], 1e400", path, num)
	}
}
