// Package results is the contract of a run's output folder: the trial
// record of trials.jsonl (Record; specs/trial.schema.json describes its
// keys), the journal that appends and reads it, the manifest run.json,
// the folder's lock, and the merge of shards' folders.
//
// Anything that only reads results, such as granite report, needs this
// package alone, never the agents, meters or servers that wrote them (as
// inspect_ai keeps its log/ apart from the evaluation itself). Its JSON is
// a stable contract: add keys, never rename or remove them.
package results
