package sim_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/loadcurve/loadcurve/loadgen/sim"
)

// Serve the default profile on a free loopback port and ask for a short
// completion. The text is the simulator's fixed word cycle, one word per
// token, so the numbers in usage can be checked by counting words.
func ExampleStart() {
	cfg, err := sim.Profile(sim.ProfileMedium)
	if err != nil {
		panic(err)
	}
	run, err := sim.Start(cfg, "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer run.Close()

	body := `{"model":"loadcurve-sim","prompt":"Write five words","max_tokens":5}`
	resp, err := http.Post(run.URL()+"/completions", "application/json", strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Text         string `json:"text"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		panic(err)
	}
	fmt.Printf("%q %s\n", out.Choices[0].Text, out.Choices[0].FinishReason)
	fmt.Println(out.Usage.PromptTokens, out.Usage.CompletionTokens)
	// Output:
	// "the model is a simulated" length
	// 3 5
}

// The CLI builds its flags from Params and applies them with Set.
func ExampleConfig_Set() {
	cfg, _ := sim.Profile(sim.ProfileLatency)
	if err := cfg.Set("max-num-seqs", "8"); err != nil {
		panic(err)
	}
	fmt.Println(cfg.MaxNumSeqs, cfg.Validate())
	fmt.Println(cfg.Set("max-num-seqs", "eight"))
	// Output:
	// 8 <nil>
	// sim parameter max-num-seqs="eight": want an integer: strconv.Atoi: parsing "eight": invalid syntax
}
