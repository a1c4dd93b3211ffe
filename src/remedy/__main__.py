from remedy.entry import script

script()
