package sweep

// DefaultObjectives are the objectives of a sweep of a real target that gives none, in --goodput
// syntax: a sweep without objectives cannot place a knee. The embedded deployment has its own
// (its clock runs faster than a real one's: sim.ProfileObjectives, sim.QueueConfig.Objectives).
// They are printed with every result.
const DefaultObjectives = "ttft:2000 tpot:100"
