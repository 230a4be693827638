package sim

import (
	"fmt"

	"github.com/loadcurve/loadcurve/internal/field"
	decl "github.com/loadcurve/loadcurve/internal/param"
)

// FieldModelName names the served model's name, the batching server's tunable and the queue's.
const FieldModelName = "model-name"

// queueField is the name of the queue's tunable called name: FieldQueue, a dash and the name
// ("queue-servers"), but for the served model's name, which is the batching server's too
// ("model-name": one input names the model whichever server model serves it).
func queueField(name string) string {
	if name == FieldModelName {
		return name
	}
	return FieldQueue + "-" + name
}

// Params declares the queue's tunables, bound to c and named by queueField, each given as text
// (an integer, or a duration such as 400ms); the default said is DefaultQueueConfig's.
func (c *QueueConfig) Params() []decl.Param {
	def := DefaultQueueConfig()
	ps := make([]decl.Param, len(queueParams))
	for i, p := range queueParams {
		ps[i] = decl.Var(queueField(p.name), queueTunable{c, p}, fmt.Sprintf("with %v %s: %s", field.Ref(FieldModel), ModelMDC, p.usage)).Default(p.get(&def))
	}
	return ps
}

// queueTunable is one of a QueueConfig's tunables as a param.Value.
type queueTunable struct {
	c *QueueConfig
	p queueParam
}

func (t queueTunable) String() string { return t.p.get(t.c) }

// Set sets the tunable; a text it cannot read is a field.Error named by the tunable.
func (t queueTunable) Set(text string) error {
	if err := t.p.set(t.c, text); err != nil {
		return field.Errorf(queueField(t.p.name), "%q: %v", text, err)
	}
	return nil
}

// Check returns every problem of the queue (Validate), each a field.Error named as in Params.
func (c QueueConfig) Check() []error {
	if err := c.Validate(); err != nil {
		return err.(interface{ Unwrap() []error }).Unwrap()
	}
	return nil
}
