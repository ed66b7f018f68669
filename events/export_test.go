package events

// UnmarshalReflect is Unmarshal through encoding/json alone, the reference
// the fast decoder is held to.
var UnmarshalReflect = unmarshalReflect

// UnmarshalFast is the fast decoder alone: ok is false for what it declines.
var UnmarshalFast = unmarshalFast
