package redact

// FromSettings is the set of every secret a target's settings hold as a user gives them: the
// API key, the values of "Name: value" header lines, the base URL's user info, Basic
// credential and query values, and the credential-named members of a JSON extra body. Empty
// settings add nothing.
func FromSettings(apiKey string, headers []string, baseURL string, extraBody []byte) *Secrets {
	s := New()
	s.AddAPIKey(apiKey)
	for _, h := range headers {
		s.AddHeader(h)
	}
	s.AddURL(baseURL)
	s.AddJSONCredentials(extraBody)
	return s
}
