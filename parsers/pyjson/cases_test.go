package pyjson

// Expectations from Python 3: json.dumps(json.loads(in), ensure_ascii=False).

var pythonCanonical = []struct{ in, want string }{
	{"{\"a\": 1}", "{\"a\": 1}"},
	{"{\"a\":1,\"b\":[1,2.5,-0,-0.0,1e-7,-0.000125,1e16,1e15,123456789012345678901234567890,1.0E+2,0.1,1e400,-1e400]}", "{\"a\": 1, \"b\": [1, 2.5, 0, -0.0, 1e-07, -0.000125, 1e+16, 1000000000000000.0, 123456789012345678901234567890, 100.0, 0.1, Infinity, -Infinity]}"},
	{"  [true, false, null, NaN, Infinity, -Infinity]  ", "[true, false, null, NaN, Infinity, -Infinity]"},
	{"\"say \\\"hi\\\" \\u00e9 \\ud83d\\ude00 \\n\\t\\/ \\u0001 \\u001f\"", "\"say \\\"hi\\\" \xc3\xa9 \xf0\x9f\x98\x80 \\n\\t/ \\u0001 \\u001f\""},
	{"{\"q\": \"\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xae\xe5\xa4\xa9\xe6\xb0\x97 \xf0\x9f\x8c\xa7\xef\xb8\x8f caf\xc3\xa9\"}", "{\"q\": \"\xe6\x9d\xb1\xe4\xba\xac\xe3\x81\xae\xe5\xa4\xa9\xe6\xb0\x97 \xf0\x9f\x8c\xa7\xef\xb8\x8f caf\xc3\xa9\"}"},
	{"{}", "{}"},
	{"[]", "[]"},
	{"{\"x\": {\"y\": [{}, [], \"\"]}}", "{\"x\": {\"y\": [{}, [], \"\"]}}"},
	{"3", "3"},
	{"-12", "-12"},
	{"1.5e300", "1.5e+300"},
	{"5e-324", "5e-324"},
	{"0.0001", "0.0001"},
	{"0.00001", "1e-05"},
	{"123.456e5", "12345600.0"},
	{"\"\x7f\"", "\"\x7f\""},
	{"{\"k\":\"\\b\\f\\r\"}", "{\"k\": \"\\b\\f\\r\"}"},
	{"\x0a{\x0a  \"name\": \"search\",\x0a  \"arguments\": {\x0a    \"query\": \"x\",\x0a    \"top_k\": 2\x0a  }\x0a}\x0a", "{\"name\": \"search\", \"arguments\": {\"query\": \"x\", \"top_k\": 2}}"},
}

// Inputs Python 3 json.loads rejects.
var pythonRejects = []string{
	"{\"a\": 1,}",
	"[1,]",
	"01",
	"1.",
	".5",
	"{\"a\" 1}",
	"tru",
	"\"\x0a\"",
	"\"\\x\"",
	"{",
	"[1] x",
	"-",
	"1e",
	"+1",
	"'a'",
	"\"\\u12\"",
	"nul",
}
