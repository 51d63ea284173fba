"""In-process note store for the nested plugin."""


class NoteStore:
    def __init__(self):
        self.notes = []

    def add(self, text):
        if text and text.strip():
            self.notes.append(text.strip())

    def find(self, query):
        words = {w.strip("?.,!").lower() for w in (query or "").split() if len(w) > 3}
        return [n for n in self.notes if words & {w.strip("?.,!").lower() for w in n.split()}]
