module attributes {test.a = array<index: 1>} {}
