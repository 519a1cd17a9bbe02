"""Value estimates: the match-win chance from the scores, and what a hand did to it."""
