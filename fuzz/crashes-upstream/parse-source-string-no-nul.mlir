

// MB is assigned by split, not by the user.
func.func @reserved_tag_is_rejected() {
  // expected-error@+1 {{'piper.Aannotate' op tag 'MB' is reserved: split assigns microbatch numbers}}
  piper.annotate {MB = 0} {
    piper.yield
  }
  return
}

piper.rope