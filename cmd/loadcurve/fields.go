package main

import (
	"github.com/loadcurve/loadcurve/arrival"
	"github.com/loadcurve/loadcurve/cmd/internal/cliparam"
	"github.com/loadcurve/loadcurve/curve/compare"
	"github.com/loadcurve/loadcurve/curve/report"
	"github.com/loadcurve/loadcurve/curve/result"
	"github.com/loadcurve/loadcurve/curve/sweep"
	"github.com/loadcurve/loadcurve/internal/bench"
	"github.com/loadcurve/loadcurve/loadgen"
	"github.com/loadcurve/loadcurve/loadgen/runner"
	"github.com/loadcurve/loadcurve/loadgen/shard"
	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/workloads"
)

// fieldFlags is the one table from the libraries' inputs, as their field.Errors name them in
// their own words, to the flags that give them. An input named as its flag is, without the
// dashes (burstiness, workload, header, retries, shard, budget; curve's, plan's, cost's and
// sim's), needs no row.
var fieldFlags = map[string]string{
	arrival.FieldRate:      "request-rate",
	arrival.FieldRamp:      "ramp-up-strategy",
	arrival.FieldRampStart: "ramp-up-start-rps",
	arrival.FieldRampEnd:   "ramp-up-end-rps",

	workloads.FieldCache:           "cache",
	workloads.FieldTimeScale:       "trace-time-scale",
	workloads.FieldInputLen:        "random-input-len",
	workloads.FieldOutputLen:       "random-output-len",
	workloads.FieldPrefixLen:       "random-prefix-len",
	workloads.FieldRangeRatio:      "random-range-ratio",
	workloads.FieldLengthDist:      "random-length-dist",
	workloads.FieldGroups:          "shared-prefix-groups",
	workloads.FieldGroupPrefixLen:  "shared-prefix-len",
	workloads.FieldSuffixLen:       "shared-suffix-len",
	workloads.FieldTurns:           "session-turns",
	workloads.FieldTurnsRangeRatio: "session-turns-range-ratio",
	workloads.FieldThink:           "think-time", // sweep.FieldThink too: a closed loop's users think as long
	workloads.FieldThinkDist:       "think-time-dist",
	workloads.FieldSystemLen:       "session-system-len",
	workloads.FieldMultiTurn:       "sharegpt-multi-turn",

	measure.FieldObjectives:        "goodput",
	measure.FieldPercentiles:       "metric-percentiles",
	measure.FieldPercentileMetrics: "percentile-metrics",

	loadgen.FieldBaseURL:         "base-url",
	loadgen.FieldEndpoint:        "endpoint",
	loadgen.FieldExtraBody:       "extra-body",
	loadgen.FieldRequestIDPrefix: "request-id-prefix",
	loadgen.FieldTimeout:         "timeout",
	loadgen.FieldMaxResponse:     "max-response-mib",
	loadgen.FieldReadyTimeout:    "ready-check-timeout-sec",
	loadgen.FieldAPIKey:          "api-key",
	loadgen.FieldIgnoreEOS:       "ignore-eos",
	loadgen.FieldInsecure:        "insecure",
	loadgen.FieldServerMetrics:   "server-metrics",
	loadgen.FieldRateLimit:       "rate-limit",
	// loadgen.FieldMaxConcurrency is sweep.FieldMaxConcurrency: one cap, --max-concurrency.

	shard.FieldStartAt: "start-at",
	shard.FieldOut:     "out",

	sweep.FieldRates:           "request-rates",
	sweep.FieldUsers:           "max-concurrencies",
	sweep.FieldMaxConcurrency:  "max-concurrency",
	sweep.FieldRequests:        "num-requests",
	sweep.FieldDuration:        "duration",
	sweep.FieldTierRequests:    "tier-requests",
	sweep.FieldMinTierDuration: "min-tier-duration",
	sweep.FieldMaxTierDuration: "max-tier-duration",
	sweep.FieldDrain:           "drain-timeout",
	sweep.FieldMaxTiers:        "max-tiers",
	sweep.FieldRepeat:          "repeat",
	result.FieldWarmup:         "window-warmup",
	result.FieldCooldownWindow: "window-cooldown",
	result.FieldBounded:        "bounded-memory",
	result.FieldMaxScheduleLag: "max-schedule-lag",

	runner.FieldWarmups:     "num-warmups",
	runner.FieldVirtual:     "sim-clock",
	runner.FieldSimReplicas: "sim-replicas",
	runner.FieldQueueLimit:  "sim-queue-queue-limit",

	bench.FieldRates:          "rates",
	bench.FieldConcurrency:    "max-concurrency",
	bench.FieldDuration:       "duration",
	bench.FieldRepeats:        "repeats",
	bench.FieldChunks:         "chunks",
	bench.FieldChunkGap:       "chunk-gap",
	bench.FieldStreams:        "streams",
	bench.FieldStreamOpenRate: "stream-open-rate",
	bench.FieldLightRate:      "light-rate",
	bench.FieldLightDuration:  "light-duration",
	bench.FieldSpin:           "spin",

	compare.FieldConfidence: "paired-confidence",
	compare.FieldCostA:      "a-cost-per-hour",
	compare.FieldCostB:      "b-cost-per-hour",
	runner.FieldResume:      "resume",

	// merge
	shard.FieldReplace:         "replace",
	shard.FieldMaxAnchorSpread: "max-anchor-spread",
	shard.FieldMaxScheduleLag:  "max-schedule-lag",

	// report
	report.FieldOut:     "out",
	report.FieldReplace: "replace",
	report.FieldFormat:  "format",
	report.FieldVerbose: "verbose",
	report.FieldQuiet:   "quiet",

	report.FieldPlotFormats: "plot-formats",

	// bench (bench.Settings): the settings besides the run's options; sim, compare and cost name theirs as their flags.
	bench.FieldQuick:   "quick",
	bench.FieldSeed:    "seed",
	bench.FieldProfile: "profile",
	bench.FieldJSON:    "json",
	bench.FieldFormat:  "format",

	// sweep
	sweep.FieldNoConfirm:       "no-confirm",
	workloads.FieldSetRequests: "num-requests",
	workloads.FieldSetSeed:     "seed",
	workloads.FieldSetOut:      "out",
	sweep.FieldOut:             "out",
	sweep.FieldReplace:         "replace",
}

// bind gives the libraries' settings as flags named by fieldFlags, and writes their field
// errors with those flags.
var bind = cliparam.Binding{
	Fields:  fieldFlags,
	Aliases: map[string][]string{"num-requests": {"num-prompts"}, "verbose": {"v"}, "quiet": {"q"}},
	Env:     map[string][]string{"api-key": {"OPENAI_API_KEY"}, "plot-formats": {"LOADCURVE_PLOT_FORMATS"}},
}
