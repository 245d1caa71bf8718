"""What the rules ask about the code: qualified names of SDK symbols and the kinds of receivers."""
