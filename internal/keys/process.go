package keys

// ProcessRecord returns the key of the record a latchkey process keeps of
// itself (see internal/process), latchkey_process:{uuid}: uuid is the
// process's UUID, the first half of every owner id it makes (see
// internal/owner).
func ProcessRecord(uuid string) string { return Prefix(processPrefix, uuid) }

// ProcessRecordPattern matches the key of every process record, as an ACL
// key pattern does (~latchkey_process:*).
const ProcessRecordPattern = processPrefix + ":*"

const processPrefix = "latchkey_process"
