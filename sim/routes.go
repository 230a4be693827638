package sim

import "net/http"

// routes maps every API path the simulated deployment serves to its handler on a Server: the
// one place an endpoint kind is added to the simulator. Cluster balances exactly these paths
// over its replicas. (Queue, the M/D/c model, serves chat and completions only.)
var routes = map[string]func(*Server, http.ResponseWriter, *http.Request){
	"/v1/chat/completions": func(s *Server, w http.ResponseWriter, r *http.Request) { s.serveCompletion(w, r, apiChat) },
	"/v1/completions":      func(s *Server, w http.ResponseWriter, r *http.Request) { s.serveCompletion(w, r, apiCompletions) },
	"/v1/responses":        func(s *Server, w http.ResponseWriter, r *http.Request) { s.serveCompletion(w, r, apiResponses) },
	"/v1/embeddings":       (*Server).serveEmbeddings,
}
