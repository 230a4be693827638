package runner

import "github.com/loadcurve/loadcurve/loadgen/sim"

// Embed sets the options to start the simulated deployment d the settings s picked (with no
// base URL): the batching server or the queue, labelled as d is, on s's clock (the virtual
// one serves the queue's discrete-event model, Virtual), as s's replicas behind s's balancer.
func (o *Options) Embed(s sim.Settings, d sim.Deployment) {
	o.Sim, o.Queue, o.SimLabel = d.Config, d.Queue, d.Label()
	o.Virtual, o.SimReplicas, o.SimBalance = s.Clock == sim.ClockVirtual, s.Replicas, s.Balance
}
