package loadgen

// Names of a target's and a tier's inputs, as their errors name them (field.Error).
const (
	FieldBaseURL         = "base URL"
	FieldEndpoint        = "endpoint kind"
	FieldHeader          = "header"
	FieldExtraBody       = "body parameters"
	FieldRequestIDPrefix = "request id prefix"
	FieldTimeout         = "request timeout"
	FieldMaxResponse     = "response size cap"
	FieldMaxConcurrency  = "concurrency cap" // as package sweep names it
	FieldRetries         = "retries"
	FieldReadyTimeout    = "ready-check timeout"
)
