// Package queueing is the mathematics of the queues loadcurve's decisions are held to: the
// exact steady state of the M/D/c FIFO queue (MDCWaitCDF, MDCCapacity), its discrete-event core
// (Core), and a run of it on a virtual clock (Simulate). The embedded deployment's HTTP queue
// (sim), the shadow queue that controls a tier's share (shadow) and the tests' truths use this
// one model.
//
// It imports nothing of the project: the packages of pure functions over records may use it
// without linking a server.
package queueing
