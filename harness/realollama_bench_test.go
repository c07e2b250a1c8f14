package harness

import (
	"context"
	"testing"

	"github.com/mcpgranite/granite/gen"
	"github.com/mcpgranite/granite/harness/results"
	"github.com/mcpgranite/granite/internal/gguf"
	"github.com/mcpgranite/granite/internal/level"
	"github.com/mcpgranite/granite/internal/models/ollama/ollamaserver"
	"github.com/mcpgranite/granite/internal/models/ollama/tinymodel"
)

// BenchmarkRealOllamaPrefixCache measures what the plan's order buys on a
// real Ollama (make bench runs it when the lane's binary is built): one
// model's trials of a (domain, level) run back to back, so every trial
// after the first finds the system prompt and tool list in the server's
// prefix cache. It reports the first trial's prompt evaluation (seconds
// and prompt_eval_count) against the later trials' mean, from the
// records' Ollama durations. The model is a tiny one that answers at
// once, so the figures are the prompt's alone. Measured here: 45 s for
// the first trial's 11,691 tokens, 3.3 s for the later ones, whose
// prompt_eval_count is as large: Ollama counts the cached prefix too, so
// the cache shows in the time, not in the count.
func BenchmarkRealOllamaPrefixCache(b *testing.B) {
	bin := ollamaserver.Binary(b)
	spec := loadSpec(b)
	d := spec.Domains[0]
	m, err := tinymodel.Build(tinymodel.Script{Default: tinymodel.Reply{Text: "Done."}, Type: gguf.F32, NumCtx: 32768})
	if err != nil {
		b.Fatal(err)
	}
	var first, later, firstTok, laterTok float64
	for b.Loop() {
		srv := ollamaserver.Start(b, bin)
		srv.Create(b, "tiny", m.Modelfile("./model.gguf"), map[string][]byte{"model.gguf": m.GGUF})
		cfg := testConfig("prefix", srv.URL, "tiny")
		// The tiny model's tokenizer has no merges: a token a byte, so the
		// prompt needs the model's whole context.
		cfg.Domains, cfg.Granularities, cfg.NumCtx = []string{d.Name}, []level.Level{level.L1}, 32768
		for _, s := range d.Scenarios[:min(3, len(d.Scenarios))] {
			cfg.Scenarios = append(cfg.Scenarios, s.ID)
		}
		out := b.TempDir()
		if _, err := Run(context.Background(), cfg, spec, Options{Out: out, Lookup: gen.Lookup}); err != nil {
			b.Fatal(err)
		}
		recs, _, err := results.ReadJournal(out + "/" + results.TrialsFile)
		if err != nil || len(recs) < 2 {
			b.Fatalf("%d records, %v", len(recs), err)
		}
		if recs[0].ErrorClass != "" && recs[0].ErrorClass != results.ErrMalformed {
			b.Fatalf("first trial: %s %s", recs[0].ErrorClass, recs[0].Error)
		}
		first, firstTok = float64(recs[0].Durations.PromptEvalNS)/1e9, float64(recs[0].PromptTokens)
		later, laterTok = 0, 0
		for _, r := range recs[1:] {
			later += float64(r.Durations.PromptEvalNS) / 1e9 / float64(len(recs)-1)
			laterTok += float64(r.PromptTokens) / float64(len(recs)-1)
		}
		srv.Stop()
	}
	b.ReportMetric(first, "first-prompt-eval-s")
	b.ReportMetric(later, "later-prompt-eval-s")
	b.ReportMetric(firstTok, "first-prompt-tokens")
	b.ReportMetric(laterTok, "later-prompt-tokens")
}
