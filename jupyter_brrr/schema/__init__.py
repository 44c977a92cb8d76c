"""The documents' shapes: names, columns and validation of every JSON document (the contract with the browser app). Imports nothing else of jupyter_brrr."""
