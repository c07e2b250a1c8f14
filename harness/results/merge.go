package results

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MergeSummary is what Merge combined.
type MergeSummary struct {
	Shards  []string
	Records int
	Grid    int
	// Missing counts grid trials no shard recorded: the shards not
	// given.
	Missing int
}

// Merge combines the output folders of shards of one run into out. It
// refuses folders of different configs or benchmarks, a shard given
// twice, a shard that did not finish, and a trial recorded by two
// folders. Shards not given at all are counted in Missing.
func Merge(out string, dirs []string) (*MergeSummary, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("merge: no shard folders given")
	}
	var first *Manifest
	shards := map[string]string{}
	owner := map[string]string{}
	var all []Record
	planned := 0
	for _, d := range dirs {
		m, err := ReadManifest(d)
		if err != nil {
			return nil, fmt.Errorf("merge: %s: %w (expected a folder granite run wrote)", d, err)
		}
		if first == nil {
			first = m
		} else if m.ConfigHash != first.ConfigHash {
			return nil, fmt.Errorf("merge: %s is a run of another config or benchmark (hash %s) than %s (hash %s)", d, m.ConfigHash, dirs[0], first.ConfigHash)
		}
		if prev, ok := shards[m.Shard]; ok {
			return nil, fmt.Errorf("merge: %s and %s are both shard %s", prev, d, m.Shard)
		}
		shards[m.Shard] = d
		planned += m.Trials
		recs, _, err := ReadJournal(filepath.Join(d, TrialsFile))
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		// A shard finished when its journal holds every trial its run.json
		// plans: a run writes both, and a resume rewrites the plan, so the
		// pair needs no marker of its own that a kill could leave stale.
		if len(recs) < m.Trials {
			return nil, fmt.Errorf("merge: %s (shard %s) did not finish: it holds %d of its %d trials; run it again with --resume on that folder, then merge", d, m.Shard, len(recs), m.Trials)
		}
		for _, r := range recs {
			if prev, ok := owner[r.TrialID]; ok {
				return nil, fmt.Errorf("merge: trial %s is in both %s and %s; shards must not overlap", r.TrialID, prev, d)
			}
			owner[r.TrialID] = d
			all = append(all, r)
		}
	}
	if abs(out) == "" {
		return nil, fmt.Errorf("merge: no output folder")
	}
	for _, d := range dirs {
		if abs(d) == abs(out) {
			return nil, fmt.Errorf("merge: the output folder %s is one of the shards", out)
		}
	}
	lock, err := LockOut(out)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	defer lock.Release()
	if _, err := os.Stat(filepath.Join(out, TrialsFile)); err == nil {
		return nil, fmt.Errorf("merge: %s already holds %s; choose an empty folder", out, TrialsFile)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Index < all[j].Index })
	j, _, err := OpenJournal(filepath.Join(out, TrialsFile))
	if err != nil {
		return nil, err
	}
	for i := range all {
		if err := j.Append(&all[i]); err != nil {
			j.Close()
			return nil, err
		}
	}
	if err := j.Close(); err != nil {
		return nil, err
	}
	var names []string
	for s := range shards {
		names = append(names, s)
	}
	sort.Strings(names)
	m := *first
	m.Shard = "merged " + strings.Join(names, ",")
	// The merged run plans what its shards planned: a merge of some of
	// the shards must not read as the whole grid.
	m.Trials = planned
	m.WarmUps, m.Models = nil, map[string]ModelInfo{}
	for _, d := range dirs {
		dm, _ := ReadManifest(d)
		m.WarmUps = append(m.WarmUps, dm.WarmUps...)
		// A shard describes only the models it ran; the report's size
		// tables need every model of the merged run.
		maps.Copy(m.Models, dm.Models)
	}
	if err := WriteManifest(out, &m); err != nil {
		return nil, err
	}
	return &MergeSummary{Shards: names, Records: len(all), Grid: first.Grid, Missing: first.Grid - len(all)}, nil
}

func abs(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return a
}
