package measure

import (
	"fmt"

	"github.com/loadcurve/loadcurve/measure/records"
)

// BusyMachine is the share of the machine's CPU time busy over a tier from which the tier's
// verdict says so: a target that shares those cores ran at the speed that left it, and a truth
// measured at another time may differ (issue 36 measured an engine 2–3× slower at a load average
// of 5–7 than at 1–2 on 2 cores).
const BusyMachine = 0.9

// BusyText says, for a tier whose machine was at least BusyMachine busy, how busy and what the
// client's part was; "" otherwise.
func BusyText(c *records.TierCPU) string {
	if c == nil || c.MachineCPUs == 0 || c.MachineBusy < BusyMachine {
		return ""
	}
	return fmt.Sprintf("the machine's %d CPUs were %s busy (the client %s of one core): a deployment that shares them ran at the speed they left it",
		c.MachineCPUs, pctText(c.MachineBusy), pctText(c.Cores()))
}

// pctText writes a share as a percentage: one decimal below 10 %, none above ("0.9 %", "54 %").
func pctText(v float64) string {
	if v < 0.1 {
		return fmt.Sprintf("%.1f %%", 100*v)
	}
	return fmt.Sprintf("%.0f %%", 100*v)
}
