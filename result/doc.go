// Package result owns a result directory: the names of its files (records.jsonl, curve.json,
// summary.json, the plots, …), which files belong to a result, the rule that refuses a directory
// already holding one or replaces all of it (and nothing else), the lock that gives a directory
// one writer at a time, the atomic write of its JSON files, and the records header, built once
// from parsed values.
//
// It imports nothing of ours but records, so every package that reads or writes a result
// (sweep, shard, the session that runs a target, report, cmd) names the files through it.
package result
