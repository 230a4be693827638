// Package result owns a result directory in both directions. Writing: the names of its files
// (records.jsonl, curve.json, summary.json, the plots, …), which files belong to a result, the
// rule that refuses a directory already holding one or replaces all of it (and nothing else),
// the lock that gives a directory one writer at a time, the atomic write of its JSON files, and
// the records header, built once from parsed values. Reading: the result a records file derives
// under the settings it was judged by (Result: every tier's summary and the curve's analysis,
// Build, FromFile, ScanFile), a directory loaded back (Load, Loaded), its answer files
// (CurveFile, RunFile), vLLM's peak figures and its result file (Peak, VLLMResult).
//
// It imports the pure layers only (records, measure, curve and what they use), never the
// executor (sweep), a runner or a server: report, compare, plan and --resume read a result
// through it, and sweep builds one with it.
package result
