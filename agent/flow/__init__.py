"""Information flow: the labels loop code puts on values (whose words, who may read them) and the
checks at every sink (`sinks`) that decide where owner-only data may go."""
