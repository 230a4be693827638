package sim

import (
	"net/http"

	decl "github.com/loadcurve/loadcurve/internal/param"
)

// Deployment is the server a Settings picks, configured: the exact M/D/c queue (Queue, for
// ModelMDC) or the batching server of Profile (Config).
type Deployment struct {
	Profile string
	Queue   *QueueConfig
	Config  Config
}

// Configure configures the server s picks. The queue starts from DefaultQueueConfig and takes
// the values apply sets on its Params (apply returns those it could not read); the batching
// server is s.Profile's with the tunables lookup gives (ConfigFrom). The errors are field
// errors named as in Params: the values that did not read, or else the queue's Check.
func (s Settings) Configure(apply func([]decl.Param) []error, lookup func(name string) (string, bool)) (Deployment, []error) {
	if s.Model == ModelMDC {
		q := DefaultQueueConfig()
		errs := apply(q.Params())
		if len(errs) == 0 {
			errs = q.Check()
		}
		return Deployment{Profile: s.Profile, Queue: &q}, errs
	}
	cfg, errs := ConfigFrom(s.Profile, lookup)
	return Deployment{Profile: s.Profile, Config: cfg}, errs
}

// Label names the deployment in results: the queue (QueueConfig.String) or the profile.
func (d Deployment) Label() string {
	if d.Queue != nil {
		return d.Queue.String()
	}
	return d.Profile
}

// ModelName is the name the deployment serves its model as.
func (d Deployment) ModelName() string {
	if d.Queue != nil {
		return d.Queue.ModelName
	}
	return d.Config.ModelName
}

// Start starts the deployment as one server (NewQueue or New), and returns it and the
// function that stops it.
func (d Deployment) Start() (http.Handler, func(), error) {
	if d.Queue != nil {
		q, err := NewQueue(*d.Queue)
		if err != nil {
			return nil, nil, err
		}
		return q, q.Close, nil
	}
	s, err := New(d.Config)
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}
