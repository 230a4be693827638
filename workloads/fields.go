package workloads

// Names of a workload's inputs, as its errors name them (field.Error).
const (
	FieldWorkload        = "workload"
	FieldCache           = "cache policy"
	FieldTimeScale       = "trace time scale"
	FieldInputLen        = "input length"
	FieldOutputLen       = "output length"
	FieldPrefixLen       = "common prefix length"
	FieldRangeRatio      = "length range ratio"
	FieldLengthDist      = "length distribution"
	FieldGroups          = "prefix groups"
	FieldGroupPrefixLen  = "group prefix length"
	FieldSuffixLen       = "suffix length"
	FieldTurns           = "turns per session"
	FieldTurnsRangeRatio = "turns range ratio"
	FieldThink           = "think time"
	FieldThinkDist       = "think time distribution"
	FieldSystemLen       = "system prompt length"
)
