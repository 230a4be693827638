package sim

import "net/http"

// routes maps every API path the simulated deployment serves to its handler on a Server: the
// one place an endpoint kind is added to the simulator (a generating API is a genAPI, run on the
// engine by serveCompletion; another has its own handler, as embeddings). Cluster balances exactly these paths
// over its replicas. (Queue, the M/D/c model, serves chat and completions only.)
var routes = map[string]func(*Server, http.ResponseWriter, *http.Request){
	"/v1/chat/completions": generating(chatAPI{}),
	"/v1/completions":      generating(completionsAPI{}),
	"/v1/responses":        generating(responsesAPI{}),
	"/v1/embeddings":       (*Server).serveEmbeddings,
}

// generating is the route of a generating API: its requests run on the engine.
func generating(a genAPI) func(*Server, http.ResponseWriter, *http.Request) {
	return func(s *Server, w http.ResponseWriter, r *http.Request) { s.serveCompletion(w, r, a) }
}
