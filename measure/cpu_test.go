package measure_test

import (
	"testing"

	"github.com/loadcurve/loadcurve/measure"
	"github.com/loadcurve/loadcurve/measure/records"
)

// TestBusyText: a tier's line says the machine was busy from BusyMachine on, with the client's
// part.
func TestBusyText(t *testing.T) {
	for _, tc := range []struct {
		name string
		cpu  *records.TierCPU
		busy string
	}{
		{"not read", nil, ""},
		{"an idle machine", &records.TierCPU{WallS: 100, ProcessS: 0.9, MachineCPUs: 2, MachineBusy: 0.54}, ""},
		{"just below the line", &records.TierCPU{WallS: 100, ProcessS: 0.9, MachineCPUs: 2, MachineBusy: 0.899}, ""},
		{"a busy machine", &records.TierCPU{WallS: 100, ProcessS: 12, MachineCPUs: 2, MachineBusy: 0.97},
			"the machine's 2 CPUs were 97 % busy (the client 12 % of one core): a deployment that shares them ran at the speed they left it"},
		{"a busy machine, slightly busy client", &records.TierCPU{WallS: 100, ProcessS: 0.05, MachineCPUs: 2, MachineBusy: 1},
			"the machine's 2 CPUs were 100 % busy (the client 0.1 % of one core): a deployment that shares them ran at the speed they left it"},
		{"no /proc/stat", &records.TierCPU{WallS: 10, ProcessS: 2.5, InProcessTarget: true}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := measure.BusyText(tc.cpu); got != tc.busy {
				t.Errorf("BusyText %q, want %q", got, tc.busy)
			}
		})
	}
}
