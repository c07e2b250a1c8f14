package mcpdomain

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type row struct {
	ID string `json:"id"`
	N  int    `json:"n"`
}

func newRows() Table[row] {
	return NewTable("thing", "TH", 3, []row{{"TH001", 1}, {"TH007", 7}}, func(r *row) *string { return &r.ID }, func(r row) row { return r })
}

func TestTableIDsContinueAfterSeedAndAreNeverReused(t *testing.T) {
	tb := newRows()
	if got := tb.Insert(row{N: 8}).ID; got != "TH008" {
		t.Fatalf("first insert got %s, want TH008", got)
	}
	if _, err := tb.Delete("thing_id", "TH008"); err != nil {
		t.Fatal(err)
	}
	if got := tb.Insert(row{N: 9}).ID; got != "TH009" {
		t.Fatalf("insert after delete got %s, want TH009 (IDs are never reused)", got)
	}
	if diff := cmp.Diff([]string{"TH001", "TH007", "TH009"}, tb.IDs()); diff != "" {
		t.Error(diff)
	}
	c := tb.Clone()
	p, _ := tb.Ptr("thing_id", "TH001")
	p.N = 100
	if r, _ := c.Get("thing_id", "TH001"); r.N != 1 {
		t.Error("clone shares rows with the original")
	}
}

func TestNotFoundListsValidIDs(t *testing.T) {
	tb := newRows()
	_, err := tb.Get("thing_id", "TH404")
	want := `argument "thing_id": thing "TH404" does not exist; valid thing IDs include TH001, TH007`
	if err == nil || err.Error() != want || !IsToolError(err) {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestAggregator(t *testing.T) {
	a := NewAggregator("sensor", "avg", "value", "room")
	for _, x := range []struct {
		k string
		v float64
	}{{"den", 20}, {"den", 21}, {"hall", 18.5}, {"den", 22}} {
		a.Add(x.k, x.v)
	}
	got, _ := json.Marshal(a.Result())
	want := `{"entity":"sensor","function":"avg","field":"value","group_by":"room","count":4,"value":20.375,"groups":[{"key":"den","count":3,"value":21},{"key":"hall","count":1,"value":18.5}]}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Error(diff)
	}
	empty, _ := json.Marshal(NewAggregator("sensor", "max", "value", "").Result())
	if diff := cmp.Diff(`{"entity":"sensor","function":"max","field":"value","count":0,"value":null}`, string(empty)); diff != "" {
		t.Error(diff)
	}
	third := NewAggregator("s", "avg", "v", "")
	for _, v := range []float64{1, 1, 2} {
		third.Add("", v)
	}
	if v := *third.Result().Value; v != 1.333 {
		t.Errorf("avg of 1,1,2 = %v, want 1.333 (three decimals)", v)
	}
}

func TestMergeObjectAndCompareTime(t *testing.T) {
	dst := map[string]any{"a": 1.0, "b": map[string]any{"x": true}}
	got := MergeObject(dst, map[string]any{"a": nil, "c": "new"})
	if diff := cmp.Diff(map[string]any{"b": map[string]any{"x": true}, "c": "new"}, got); diff != "" {
		t.Error(diff)
	}
	if _, ok := dst["c"]; ok {
		t.Error("MergeObject changed its input")
	}
	if CompareTime("2026-03-14T08:00:00Z", "2026-03-14T09:00:00+01:00") != 0 {
		t.Error("same instant in two zones compares unequal")
	}
	if CompareTime("2026-03-14T08:00:00Z", "2026-03-14T08:00:01Z") >= 0 {
		t.Error("earlier instant does not compare less")
	}
}
